/**
 * A small XML well-formedness check for the SVG files the benchmark writes (no XML parser is
 * a dependency): one root element, every start tag closed in order, attributes quoted, text
 * free of bare `<`. Returns the root element's name, or throws naming the first problem.
 */
export function wellFormedXmlRoot(text: string): string {
  const body = text.replace(/^\s*<\?xml[^>]*\?>/, '').replace(/<!--[\s\S]*?-->/g, '');
  const token =
    /<(\/?)([A-Za-z_][\w:.-]*)((?:\s+[\w:.-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|<!\[CDATA\[[\s\S]*?\]\]>|([^<]+)|(<)/g;
  const open: string[] = [];
  let root: string | undefined;
  let closedRoot = false;
  for (let m = token.exec(body); m !== null; m = token.exec(body)) {
    const [, slash, name, , selfClosing, textPart, bareLt] = m;
    if (bareLt !== undefined) throw new Error(`malformed markup at offset ${m.index}`);
    if (textPart !== undefined) {
      if (open.length === 0 && textPart.trim() !== '') throw new Error('text outside the root element');
      continue;
    }
    if (name === undefined) continue; // CDATA
    if (slash === '/') {
      const expected = open.pop();
      if (expected !== name) throw new Error(`</${name}> closes <${expected ?? 'nothing'}>`);
      if (open.length === 0) closedRoot = true;
      continue;
    }
    if (open.length === 0) {
      if (root !== undefined) throw new Error(`a second root element <${name}>`);
      root = name;
    }
    if (selfClosing === '/') {
      if (open.length === 0) closedRoot = true;
    } else {
      open.push(name);
    }
  }
  if (root === undefined || !closedRoot || open.length > 0) throw new Error(`unclosed elements: ${open.join(' > ')}`);
  return root;
}
