/**
 * The two version comparisons of Nomad's constraints, written from their documented rules:
 * `version` (HashiCorp's go-version: lenient versions like `6.8.0-45-generic` or `1.2`,
 * constraints `=`, `!=`, `>`, `>=`, `<`, `<=`, `~>` joined by commas, and a pre-release version
 * matching only a constraint with a pre-release on the same segments) and `semver` (Nomad's strict
 * SemVer 2.0 constraints: no `~>`, at most three segments, pre-releases ordered as SemVer says and
 * never special-cased). Pure.
 * @module
 */

/** A parsed go-version version. */
export interface Version {
  /** Numeric segments, padded to at least three. */
  segments: number[];
  /** How many segments were written (`1.2` is 2). */
  written: number;
  /** The pre-release part without its dash, or ''. */
  pre: string;
}

// go-version's lenient version: digits and dots, an optional pre-release (with or without a dash), metadata.
const VERSION_RE =
  /^v?([0-9]+(?:\.[0-9]+)*?)(?:-([0-9]+[0-9A-Za-z\-~]*(?:\.[0-9A-Za-z\-~]+)*)|(?:-?([A-Za-z\-~]+[0-9A-Za-z\-~]*(?:\.[0-9A-Za-z\-~]+)*)))?(?:\+([0-9A-Za-z\-~]+(?:\.[0-9A-Za-z\-~]+)*))?$/;
// Strict SemVer (Nomad's semver constraints): at most three segments.
const SEMVER_RE = /^v?([0-9]+(?:\.[0-9]+){0,2})(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

/** Parses a go-version version; undefined when it is not one. */
export function parseVersion(text: string, strict = false): Version | undefined {
  const m = (strict ? SEMVER_RE : VERSION_RE).exec(text.trim());
  if (!m) return undefined;
  const parts = m[1]!.split('.').map(Number);
  if (parts.some((n) => !Number.isSafeInteger(n))) return undefined;
  const written = parts.length;
  while (parts.length < 3) parts.push(0);
  return { segments: parts, written, pre: strict ? (m[2] ?? '') : (m[2] ?? m[3] ?? '') };
}

/** -1, 0 or 1: `a` against `b`, segments first, then pre-releases (a release is above its pre-releases). */
export function compareVersions(a: Version, b: Version): number {
  const n = Math.max(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    const x = a.segments[i] ?? 0;
    const y = b.segments[i] ?? 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  if (a.pre === b.pre) return 0;
  if (a.pre === '') return 1;
  if (b.pre === '') return -1;
  const pa = a.pre.split('.');
  const pb = b.pre.split('.');
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    if (pa[i] === undefined) return -1;
    if (pb[i] === undefined) return 1;
    const c = comparePart(pa[i]!, pb[i]!);
    if (c !== 0) return c;
  }
  return 0;
}

function comparePart(a: string, b: string): number {
  const na = /^\d+$/.test(a);
  const nb = /^\d+$/.test(b);
  if (na && nb) return Math.sign(Number(a) - Number(b));
  if (na) return -1; // numeric identifiers sort below alphanumeric ones
  if (nb) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

type Check = (v: Version) => boolean;

/** go-version's rule: a pre-release version only matches a constraint with a pre-release on the same segments. */
function preOk(v: Version, c: Version): boolean {
  if (v.pre && c.pre) return v.segments.join('.') === c.segments.join('.');
  if (v.pre && !c.pre) return false;
  return true;
}

function single(text: string, strict: boolean): Check | undefined {
  const m = /^\s*(~>|>=|<=|!=|=|>|<)?\s*(\S+)\s*$/.exec(text);
  if (!m) return undefined;
  const op = m[1] ?? '=';
  if (strict && op === '~>') return undefined;
  const c = parseVersion(m[2]!, strict);
  if (!c) return undefined;
  const cmp = (v: Version) => compareVersions(v, c);
  // Nomad's semver constraints compare by SemVer order alone.
  const pre = (v: Version) => strict || preOk(v, c);
  switch (op) {
    case '=':
      return (v) => cmp(v) === 0;
    case '!=':
      return (v) => cmp(v) !== 0;
    case '>':
      return (v) => pre(v) && cmp(v) > 0;
    case '<':
      return (v) => pre(v) && cmp(v) < 0;
    case '>=':
      return (v) => pre(v) && cmp(v) >= 0;
    case '<=':
      return (v) => pre(v) && cmp(v) <= 0;
    default:
      // ~>: at least c, and the same leading segments up to the last one written.
      return (v) => {
        if (!preOk(v, c) || (c.pre && !v.pre) || cmp(v) < 0) return false;
        for (let i = 0; i < c.written - 1; i++) if (v.segments[i] !== c.segments[i]) return false;
        return true;
      };
  }
}

/** Parses a comma-joined constraint list; undefined when any part is malformed (Nomad: infeasible). */
export function parseVersionConstraint(text: string, strict = false): Check | undefined {
  const checks = text.split(',').map((p) => single(p, strict));
  if (checks.some((c) => c === undefined)) return undefined;
  return (v) => checks.every((c) => c!(v));
}

/**
 * Whether version `value` meets `constraint`, as Nomad's `version` (`strict` false) or `semver`
 * (`strict` true) operator decides. The version itself is parsed leniently in both cases, as
 * Nomad does; anything unparsable fails.
 */
export function versionMatches(value: string, constraint: string, strict = false): boolean {
  const v = parseVersion(value);
  const c = parseVersionConstraint(constraint, strict);
  return !!v && !!c && c(v);
}
