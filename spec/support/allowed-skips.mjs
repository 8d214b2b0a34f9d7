// The tests that may skip in CI (as root, with Chromium and a writable cgroup hierarchy), each
// with why. scripts/check-skips.mjs fails CI on any other skip. Match on the full title.
/** @type {Array<{ title: RegExp; why: string }>} */
export const ALLOWED_SKIPS = [
  {
    title: /^jobspec: HCL2 expressions in job files the shared corpus of real job files: /,
    why: 'the 79 real job files live outside the repository (../shared/corpus/jobs beside the checkout, or $BERTH_CORPUS); a clone elsewhere has none',
  },
  {
    title: /^jobspec: the corpus's job files canonicalised by berth and by Nomad's rules, whole the shared corpus of real job files \(skipped when absent\)$/,
    why: 'the real job files live outside the repository (../shared/corpus/jobs beside the checkout, or $BERTH_CORPUS); a clone elsewhere has none',
  },
  { title: /^cgroups v1 through the client \(root\) /, why: 'a machine has cgroup v1 or v2 writable, not both: the other version skips' },
  { title: /^cgroups v2 on the real unified mount \(root\) /, why: 'a machine has cgroup v1 or v2 writable, not both: the other version skips' },
  {
    title: /^cgroups: fallback when no hierarchy is writable detection gives the reason instead of failing$/,
    why: 'it needs a user who cannot write cgroupfs: as root its twin (a client run as nobody) covers it',
  },
];
