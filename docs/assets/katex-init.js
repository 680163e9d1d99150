// Typesets the formulas pymdownx.arithmatex marks (class "arithmatex", \( \) inline and \[ \] display)
// with the KaTeX bundled beside this file: no request leaves the site.
document$.subscribe(() => {
  for (const element of document.querySelectorAll(".arithmatex")) {
    const tex = element.textContent.trim();
    katex.render(tex.slice(2, -2), element, { displayMode: tex.startsWith("\\["), throwOnError: false });
  }
});
