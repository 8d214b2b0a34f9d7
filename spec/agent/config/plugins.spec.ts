/**
 * The agent file's `plugin` blocks read directly (decoded HCL or JSON): docker's client-side
 * keys and raw_exec's `enabled`, several blocks of one plugin merged in order, unknown keys and
 * plugins ignored, a wrong value refused naming its key.
 */
import { expect } from 'chai';
import { PluginConfigError, readPlugins } from '../../../agent/config/plugins.ts';

const docker = (config: unknown) => readPlugins([{ docker: [{ config: [config] }] }]).docker;
const refused = (plugin: unknown) => {
  try {
    readPlugins(plugin);
  } catch (e) {
    expect(e).to.be.instanceOf(PluginConfigError);
    expect((e as Error).name).to.equal('PluginConfigError');
    return (e as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(plugin)}`);
};

describe('agent config: plugin blocks', () => {
  it('nothing set, nothing read; a plugin berth has no keys for is ignored', () => {
    expect(readPlugins(undefined)).to.deep.equal({});
    expect(readPlugins([{ exec: [{ config: [{ no_pivot_root: true }] }] }])).to.deep.equal({});
    expect(docker({})).to.deep.equal({});
    expect(readPlugins({ docker: {} })).to.deep.equal({ docker: {} });
    expect(readPlugins([{ exec: [{ config: [{ enabled: false }] }] }]), 'enabled of another plugin is not raw_exec’s').to.deep.equal({});
    expect(readPlugins([{ raw_exec: [{ config: [{}] }] }]), 'raw_exec without enabled').to.deep.equal({});
  });

  it('docker: each key into its field, capabilities as Docker names them without cap_', () => {
    expect(
      docker({
        endpoint: 'tcp://10.0.0.1:2375',
        allow_privileged: false,
        allow_caps: ['CAP_SYS_ADMIN', 'Net_Raw', 'capital', 'x_cap_y'],
        volumes: [{ enabled: false }],
        gc: [{ image: true, image_delay: '3m', container: true, dangling_containers: [{ enabled: true, creation_grace: '5m' }] }],
        pull_activity_timeout: '2m',
        extra_labels: [],
      }),
    ).to.deep.equal({
      endpoint: 'tcp://10.0.0.1:2375',
      allowPrivileged: false,
      allowCaps: ['sys_admin', 'net_raw', 'capital', 'x_cap_y'],
      volumesEnabled: false,
      gc: { image: true, imageDelayMs: 180_000, container: true, danglingContainers: true, danglingCreationGraceMs: 300_000 },
      pullActivityTimeoutMs: 120_000,
      extraLabels: [],
    });
    expect(docker({ gc: {} })).to.deep.equal({ gc: {} });
    expect(docker({ endpoint: 'unix:///var/run/docker.sock' })).to.deep.equal({ endpoint: 'unix:///var/run/docker.sock' });
  });

  it('two blocks of one plugin merge in order, config bodies too (JSON gives an object for a list)', () => {
    const p = readPlugins([
      { docker: [{ config: [{ allow_privileged: true }] }] },
      { docker: { config: { extra_labels: ['a'] } } },
      { raw_exec: { config: { enabled: false } } },
    ]);
    expect(p).to.deep.equal({ docker: { extraLabels: ['a'] }, rawExecEnabled: false });
    const merged = readPlugins([{ docker: [{ config: [{ allow_privileged: true }, { extra_labels: ['b'] }] }] }]);
    expect(merged.docker).to.deep.equal({ allowPrivileged: true, extraLabels: ['b'] });
  });

  it('refuses a wrong value, naming its key', () => {
    const cases: Array<[unknown, string]> = [
      ['docker', 'plugin: must be plugin "<name>" { config { ... } } blocks'],
      [[null], 'plugin: must be plugin "<name>" { config { ... } } blocks'],
      [[{ docker: ['x'] }], 'plugin.docker: must be a block'],
      [[{ docker: [{ config: 'x' }] }], 'plugin.docker.config: must be a block'],
      [[{ docker: { config: { endpoint: 5 } } }], 'plugin.docker.config.endpoint: must be a string, got 5'],
      [[{ docker: { config: { endpoint: 'http://x' } } }], 'plugin.docker.config.endpoint: "http://x" is not unix:///path or tcp://host:port'],
      [[{ docker: { config: { endpoint: 'unix://rel' } } }], 'plugin.docker.config.endpoint: "unix://rel" is not unix:///path or tcp://host:port'],
      [[{ docker: { config: { endpoint: 'ssh://tcp://x' } } }], 'plugin.docker.config.endpoint: "ssh://tcp://x" is not unix:///path or tcp://host:port'],
      [[{ docker: { config: { allow_caps: ['a', 1] } } }], 'plugin.docker.config.allow_caps: must be a list of strings'],
      [[{ docker: { config: { volumes: 'on' } } }], 'plugin.docker.config.volumes: must be a block'],
      [[{ docker: { config: { volumes: { enabled: 'on' } } } }], 'plugin.docker.config.volumes.enabled: must be true or false, got "on"'],
      [[{ docker: { config: { gc: 'x' } } }], 'plugin.docker.config.gc: must be a block'],
      [[{ docker: { config: { gc: { image: 1 } } } }], 'plugin.docker.config.gc.image: must be true or false, got 1'],
      [[{ docker: { config: { gc: { container: 'no' } } } }], 'plugin.docker.config.gc.container: must be true or false, got "no"'],
      [[{ docker: { config: { gc: { image_delay: 5 } } } }], 'plugin.docker.config.gc.image_delay: must be a string, got 5'],
      [[{ docker: { config: { gc: { dangling_containers: 'x' } } } }], 'plugin.docker.config.gc.dangling_containers: must be a block'],
      [
        [{ docker: { config: { gc: { dangling_containers: { enabled: 0 } } } } }],
        'plugin.docker.config.gc.dangling_containers.enabled: must be true or false, got 0',
      ],
      [[{ docker: { config: { gc: { dangling_containers: { creation_grace: 'later' } } } } }], 'plugin.docker.config.gc.dangling_containers.creation_grace: '],
      [[{ docker: { config: { pull_activity_timeout: 'x' } } }], 'plugin.docker.config.pull_activity_timeout: '],
      [[{ docker: { config: { extra_labels: 'job' } } }], 'plugin.docker.config.extra_labels: must be a list of strings'],
      [[{ raw_exec: { config: { enabled: 'false' } } }], 'plugin.raw_exec.config.enabled: must be true or false, got "false"'],
    ];
    for (const [plugin, msg] of cases) expect(refused(plugin), msg).to.satisfy((m: string) => m.startsWith(msg));
  });
});
