/** Job file pieces shared by the jobspec specs: many groups (linearity, off-loop parsing), a checked service. */

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

/** A task-level nomad service with a script check and `check_restart { limit = 3 }`, no grace (HCL). */
export const SCRIPT_CHECK_SERVICE_HCL = `service {
        name = "s"
        provider = "nomad"
        check {
          type = "script"
          command = "/bin/true"
          interval = "10s"
          timeout = "2s"
          check_restart { limit = 3 }
        }
      }`;
