/** Job files of many groups, for the jobspec's linearity and off-loop parsing specs. */

/** A job of `groups` raw_exec groups; group `bad` (when given) has an unknown key in its task. */
export function manyGroups(groups: number, bad?: number): string {
  const out = ['job "many" {'];
  for (let g = 0; g < groups; g++) {
    out.push(`  group "g${g}" {`, `    task "t" {`, `      driver = "raw_exec"`, `      config { command = "/bin/true" }`);
    if (g === bad) out.push(`      bogus_key = 1`);
    out.push(`    }`, `  }`);
  }
  out.push('}');
  return out.join('\n');
}
