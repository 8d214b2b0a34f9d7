/**
 * Nomad's `MemoryNoLimit`: a task's `memory_max = -1` asks for no hard memory limit at all (the
 * node's memory is the bound), with `memory` as the reservation: cgroup v2 `memory.max` stays
 * `max` and `memory.low` is `memory`; docker gets no `Memory` and `memory` as its reservation.
 * @module
 */

/** `memory_max = -1`: no hard memory limit (Nomad's `structs.MemoryNoLimit`). */
export const MEMORY_NO_LIMIT = -1;
