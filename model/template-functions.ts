/**
 * Which functions a template's text calls, found without running it: inside each action
 * (`{{ ... }}`, or the template's own delimiters), strings and comments are left out and every
 * bare identifier not after `.` or `$` is a function name. Used to refuse, when a job is read,
 * the consul-template functions whose data berth does not serve (Consul's and Vault's), so a job
 * that needs them is refused by name with the template's path instead of failing at render.
 * @module
 */

/** consul-template functions that read Consul or Vault, by the system they need. */
export const FOREIGN_TEMPLATE_FUNCS: Readonly<Record<string, 'Consul' | 'Vault'>> = {
  key: 'Consul',
  keyExists: 'Consul',
  keyOrDefault: 'Consul',
  ls: 'Consul',
  safeLs: 'Consul',
  tree: 'Consul',
  safeTree: 'Consul',
  service: 'Consul',
  services: 'Consul',
  connect: 'Consul',
  caRoots: 'Consul',
  caLeaf: 'Consul',
  node: 'Consul',
  nodes: 'Consul',
  datacenters: 'Consul',
  secret: 'Vault',
  secrets: 'Vault',
  pkiCert: 'Vault',
};

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The function names `text` calls (each once, in order of first use). */
export function templateFunctionNames(text: string, left = '{{', right = '}}'): string[] {
  const names: string[] = [];
  const action = new RegExp(`${esc(left || '{{')}([\\s\\S]*?)${esc(right || '}}')}`, 'g');
  for (const m of text.matchAll(action)) {
    const body = m[1]!
      .replace(/^-\s/, ' ')
      .replace(/\s-$/, ' ')
      .replace(/\/\*[\s\S]*?\*\//g, ' ')
      .replace(/"(?:[^"\\\n]|\\.)*"|`[^`]*`|'(?:[^'\\\n]|\\.)*'/g, ' ');
    for (const w of body.matchAll(/(^|[^.$\w])([A-Za-z_]\w*)/g)) {
      const name = w[2]!;
      if (!names.includes(name)) names.push(name);
    }
  }
  return names;
}

/** The Consul and Vault functions a template calls, with the system each needs. */
export function foreignTemplateFunctions(text: string, left?: string, right?: string): Array<{ name: string; needs: 'Consul' | 'Vault' }> {
  return templateFunctionNames(text, left, right)
    .filter((n) => Object.hasOwn(FOREIGN_TEMPLATE_FUNCS, n))
    .map((name) => ({ name, needs: FOREIGN_TEMPLATE_FUNCS[name]! }));
}
