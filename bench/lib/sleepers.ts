/**
 * The job P11 and P13 run: one raw_exec group of `count` long-running tasks, each asking for as
 * little as the agent accepts (1 MHz, 10 MB, 10 MB of disk: the default 300 MB of ephemeral disk
 * would exhaust the node long before 1,000 allocs, as it would on Nomad).
 */
export function sleepersJobHcl(o: { id: string; count: number; command: string; args: string[]; env?: Record<string, string>; type?: string }): string {
  const env =
    o.env && Object.keys(o.env).length
      ? `      env {\n${Object.entries(o.env)
          .map(([k, v]) => `        ${k} = ${JSON.stringify(v)}\n`)
          .join('')}      }\n`
      : '';
  return `job ${JSON.stringify(o.id)} {
${o.type ? `  type = ${JSON.stringify(o.type)}\n` : ''}  group "g" {
    count = ${o.count}
    ephemeral_disk {
      size = 10
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = ${JSON.stringify(o.command)}
        args = ${JSON.stringify(o.args)}
      }
${env}      resources {
        cpu = 1
        memory = 10
      }
    }
  }
}
`;
}
