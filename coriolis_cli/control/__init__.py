"""Control on the engine: closed-loop simulation of Slotine–Li, passivity-based and adaptive
controllers with friction (``simulation``)."""
