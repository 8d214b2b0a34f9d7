// @ts-check
/**
 * The per-task shim: a POSIX `sh` that is the parent of one task for the task's whole life, so
 * the task's exit status survives the death of the supervisor (./supervisor.mjs) that started it.
 * It costs a few hundred KB (dash), where a Node.js process per task cost ~10 MB.
 *
 * ```
 *  supervisor ─spawn (detached)─► sh (shim)                      holds <stateDir>/stdout.fifo, stderr.fifo open (rw)
 *                                   └─ setsid sh (inner) ─exec─► task   own session and process group
 *                                        joins the cgroup, says its pid on the supervisor's pipe,
 *                                        waits for the supervisor's go (it has opened the FIFOs),
 *                                        points stdout/stderr at the FIFOs, execs the command
 *                                 task exits: the shim records `$?` in <stateDir>/status (rename), exits with it
 * ```
 * The shim holds each FIFO open for reading and writing without ever reading it: the task never
 * gets SIGPIPE while no supervisor reads (it blocks once the 64 KiB pipe is full: back-pressure),
 * and a restarted supervisor opens the FIFOs again and goes on rotating the logs. The task is a
 * foreground command of the shim (an asynchronous one would start with SIGINT ignored), in a
 * session of its own (setsid), so signals to its process group never reach the shim.
 *
 * The shim's variables are prefixed (`__berth_`) and the inner shell unsets its own before the
 * exec, so the task's environment is exactly the spec's; dash adds `PWD`, removed unless the
 * spec sets it. Names no shell can hold (`a.b`) are passed through `env NAME=VALUE`.
 * @module
 */

/** In every shim's command line: how berth's shims are told from other processes. */
export const SHIM_MARKER = 'berth-shim';

/** The inner exit code that means "could not join the task's cgroup" (a recoverable start failure). */
export const CGROUP_JOIN_FAILED = 125;

/** @param {string} s */
const quote = (s) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The inner shell: `$0` berth-task, then out fifo, err fifo, unset-PWD flag, the number of
 * cgroup files, those files, then the command line.
 */
const INNER = [
  '__berth_o=$1 __berth_e=$2 __berth_u=$3 __berth_n=$4; shift 4',
  'while [ "$__berth_n" -gt 0 ]; do',
  `  echo $$ >"$1" || { echo "${SHIM_MARKER}: cannot join the task cgroup ($1)" >&2; exit ${CGROUP_JOIN_FAILED}; }`,
  '  shift; __berth_n=$((__berth_n - 1))',
  'done',
  'if [ "$__berth_u" = 1 ]; then unset PWD; fi',
  // The command line comes in the environment (__berth_argc, __berth_a0...), so that no shim's
  // command line repeats the task's: `ps` and `pgrep -f` find the task once. Each value is
  // expanded inside double quotes by the eval, never evaluated itself.
  '__berth_i=0 __berth_set=',
  'while [ "$__berth_i" -lt "$__berth_argc" ]; do',
  '  __berth_set="$__berth_set \\"\\$__berth_a$__berth_i\\""; __berth_i=$((__berth_i + 1))',
  'done',
  'eval "set -- $__berth_set"',
  'while [ "$__berth_i" -gt 0 ]; do __berth_i=$((__berth_i - 1)); unset "__berth_a$__berth_i"; done',
  `echo $$ || exit ${CGROUP_JOIN_FAILED}`,
  // The supervisor's go: it reads the FIFOs from now on, so no output is lost to a quick task.
  `read -r __berth_go || exit ${CGROUP_JOIN_FAILED}`,
  'exec </dev/null >"$__berth_o" 2>"$__berth_e" 3>&- 4>&-',
  'unset __berth_o __berth_e __berth_u __berth_n __berth_go __berth_i __berth_set __berth_argc',
  'exec "$@"',
].join('\n');

/**
 * @typedef {{ sh: string, setsid: string, mkfifo: string, mv: string, env: string }} ShimTools
 *   absolute paths of the programs the shim runs
 */

/** @param {ShimTools} tools */
function shimScript(tools) {
  return [
    `: ${SHIM_MARKER}`,
    '__berth_s=$1 __berth_o=$2 __berth_e=$3; shift 3',
    `${quote(tools.mkfifo)} -m 600 "$__berth_o" "$__berth_e" || exit ${CGROUP_JOIN_FAILED}`,
    'exec 3<>"$__berth_o" 4<>"$__berth_e"',
    `${quote(tools.setsid)} ${quote(tools.sh)} -c ${quote(INNER)} berth-task "$__berth_o" "$__berth_e" "$@"`,
    '__berth_st=$?',
    'exec 3>&- 4>&-',
    `echo "$__berth_st" >"$__berth_s.tmp" && ${quote(tools.mv)} -f "$__berth_s.tmp" "$__berth_s"`,
    'exit "$__berth_st"',
  ].join('\n');
}

/** A valid shell variable name: what dash keeps of its environment. */
const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The shim's program, argv and environment for one task.
 * @param {{
 *   tools: ShimTools,
 *   specPath: string,
 *   statusFile: string,
 *   stdoutFifo: string,
 *   stderrFifo: string,
 *   cgroupProcs: string[],
 *   env: Record<string, string>,
 *   file: string,
 *   args: string[],
 * }} o
 * @returns {{ file: string, argv: string[], env: Record<string, string> }}
 */
export function shimCommand(o) {
  /** @type {Record<string, string>} */
  const env = {};
  /** @type {string[]} */
  const odd = [];
  for (const [k, v] of Object.entries(o.env)) {
    if (SHELL_NAME.test(k)) env[k] = v;
    else if (k && !k.includes('=')) odd.push(`${k}=${v}`);
  }
  const command = odd.length ? [o.tools.env, ...odd, o.file, ...o.args] : [o.file, ...o.args];
  env.__berth_argc = String(command.length);
  command.forEach((arg, i) => (env[`__berth_a${i}`] = arg));
  const unsetPwd = 'PWD' in o.env ? '0' : '1';
  return {
    file: o.tools.sh,
    // $0 of the shim is the spec path: a task's shim is found by its command line (see audit.ts).
    argv: ['-c', shimScript(o.tools), o.specPath, o.statusFile, o.stdoutFifo, o.stderrFifo, unsetPwd, String(o.cgroupProcs.length), ...o.cgroupProcs],
    env,
  };
}

/**
 * The exit record of a shell status (`$?`): 128 + N is "killed by signal N", as Nomad reports it.
 * A task that exits with such a code of its own is read the same way (the shell cannot tell them apart).
 * @param {number} status
 * @returns {{ exitCode: number, signal: number }}
 */
export function decodeStatus(status) {
  if (status > 128 && status < 128 + 65) return { exitCode: status, signal: status - 128 };
  return { exitCode: status, signal: 0 };
}
