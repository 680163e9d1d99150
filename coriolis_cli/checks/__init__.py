"""Verification (the paper's Sec. 5 and more) and the skew-symmetry property, as result records."""
