/**
 * Which drivers the node offers (pure): detected and healthy ones, their attributes merged, a
 * raw_exec the agent file disables shown as undetected; a change in any of it is a change.
 */
import { expect } from 'chai';
import { driversChanged, nodeDrivers } from '../../agent/config/drivers.ts';
import { meetsConstraint } from '../../agent/scheduler/feasible.ts';
import { node } from './scheduler/support.ts';

const ok = (attrs: Record<string, string> = {}) => ({ detected: true, healthy: true, healthDescription: 'Healthy', attributes: attrs });
const missing = { detected: false, healthy: false, healthDescription: 'Docker is not available', attributes: {} };

describe('agent: the drivers a node offers', () => {
  it('offers the detected and healthy drivers, with their attributes', () => {
    const n = nodeDrivers({ raw_exec: ok(), exec: ok(), docker: ok({ 'driver.docker.version': '20.10' }) }, {});
    expect(n.drivers).to.deep.equal(['docker', 'exec', 'raw_exec']);
    expect(n.attributes).to.deep.equal({ 'driver.docker': '1', 'driver.docker.version': '20.10', 'driver.exec': '1', 'driver.raw_exec': '1' });
  });

  it('a driver detected but unhealthy is not offered', () => {
    const sick = { detected: true, healthy: false, healthDescription: 'Unhealthy', attributes: { 'driver.exec.x': '1' } };
    const n = nodeDrivers({ raw_exec: ok(), exec: sick }, {});
    expect(n.drivers).to.deep.equal(['raw_exec']);
    expect(n.health.exec).to.deep.equal(sick);
    expect(n.attributes).to.deep.equal({ 'driver.raw_exec': '1' });
  });

  it('an Engine that does not answer leaves docker out, reported with its health text', () => {
    const n = nodeDrivers({ raw_exec: ok(), docker: missing }, {});
    expect(n.drivers).to.deep.equal(['raw_exec']);
    expect(n.health.docker).to.deep.equal(missing);
    expect(n.attributes).to.not.have.property('driver.docker');
  });

  it('plugin "raw_exec" { config { enabled = false } } leaves raw_exec out', () => {
    const n = nodeDrivers({ raw_exec: ok(), exec: ok() }, { rawExecEnabled: false });
    expect(n.drivers).to.deep.equal(['exec']);
    expect(n.health.raw_exec).to.deep.equal({ detected: false, healthy: false, healthDescription: 'disabled', attributes: {} });
  });

  it('a driver that appears, goes or changes its attributes is a change', () => {
    const before = nodeDrivers({ raw_exec: ok(), docker: missing }, {});
    expect(driversChanged(before, nodeDrivers({ raw_exec: ok(), docker: missing }, {}))).to.equal(false);
    expect(driversChanged(before, nodeDrivers({ raw_exec: ok(), docker: ok() }, {}))).to.equal(true);
    const up = nodeDrivers({ docker: ok({ 'driver.docker.version': '1' }) }, {});
    expect(driversChanged(up, nodeDrivers({ docker: ok({ 'driver.docker.version': '2' }) }, {}))).to.equal(true);
  });

  it('constraints read the attributes it offers: ${attr.driver.docker} and its version only while docker is offered', () => {
    const on = node({ attributes: nodeDrivers({ raw_exec: ok(), docker: ok({ 'driver.docker.version': '27.1.0' }) }, {}).attributes });
    const off = node({ attributes: nodeDrivers({ raw_exec: ok(), docker: missing }, {}).attributes });
    const isSet = { lTarget: '${attr.driver.docker}', operand: 'is_set' };
    const atLeast = { lTarget: '${attr.driver.docker.version}', operand: 'version', rTarget: '>= 20.10' };
    expect([meetsConstraint(isSet, on), meetsConstraint(atLeast, on)]).to.deep.equal([true, true]);
    expect([meetsConstraint(isSet, off), meetsConstraint(atLeast, off)]).to.deep.equal([false, false]);
  });
});
