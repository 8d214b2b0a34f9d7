/**
 * Nomad's default `chroot_env`: the host paths embedded in a chroot task dir when the client
 * configuration does not say otherwise. Each source maps to the same path inside the chroot.
 * @module
 */

/** Nomad's default chroot map (`client/config.DefaultChrootEnv`), source → destination. */
export const defaultChrootEnv: Readonly<Record<string, string>> = Object.freeze({
  '/bin': '/bin',
  '/etc': '/etc',
  '/lib': '/lib',
  '/lib32': '/lib32',
  '/lib64': '/lib64',
  '/run/resolvconf': '/run/resolvconf',
  '/sbin': '/sbin',
  '/usr': '/usr',
  // Where systemd-resolved keeps resolv.conf when /etc/resolv.conf links into it.
  '/run/systemd/resolve': '/run/systemd/resolve',
});
