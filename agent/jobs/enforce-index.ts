/**
 * Nomad's check-and-set on a job's modify index (`-check-index`, `EnforceIndex`), as a pure
 * decision: which of Nomad's three refusals a register at `want` gets, if any.
 * @module
 */

/** Why a register with an enforced index is refused: Nomad's three cases. */
export type EnforceIndexRefusal = 'exists' | 'conflict' | 'missing';

/**
 * The refusal of a register that enforces index `want` (0: the job must not exist yet) when the
 * job's modify index is `current` (undefined: no such job); undefined when it may go on.
 */
export function enforceIndexRefusal(current: number | undefined, want: number): EnforceIndexRefusal | undefined {
  if (current === undefined) return want === 0 ? undefined : 'missing';
  if (want === 0) return 'exists';
  return want === current ? undefined : 'conflict';
}

/**
 * The refusal of a scale at `want` (0: no check, as Nomad's `ScalingRequest` without an index)
 * of a job at modify index `current`; undefined when it may go on.
 */
export function scaleIndexRefusal(current: number, want: number): 'conflict' | undefined {
  return want > 0 && want !== current ? 'conflict' : undefined;
}
