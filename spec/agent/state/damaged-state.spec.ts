/**
 * The agent's refusal of a damaged client state store names the file, the library's reason and
 * the flag that repairs it; other errors pass through unchanged.
 */
import { expect } from 'chai';
import { DamagedClientStateError, REPAIR_STATE_EFFECT, agentStateError } from '../../../agent/state/damaged-state.ts';
import { BerthError, StateStoreError } from '../../../index.ts';

describe('agent state: a damaged client state store', () => {
  it('names the file, the cause and -repair-state with what it does', () => {
    const cause = new Error('file is not a database');
    const err = agentStateError(new StateStoreError('state store x is damaged', { cause, file: '/d/client/state.db' }));
    expect(err).to.be.instanceOf(DamagedClientStateError).and.instanceOf(BerthError);
    const e = err as DamagedClientStateError;
    expect(e.message).to.equal(
      `/d/client/state.db is damaged or unreadable (file is not a database); start the agent with -repair-state: ${REPAIR_STATE_EFFECT}`,
    );
    expect(e.file).to.equal('/d/client/state.db');
    expect(e.cause).to.be.instanceOf(StateStoreError);
  });

  it('without a file or a cause: says "the client state store" and gives the library message', () => {
    const e = agentStateError(new StateStoreError('schema version 9 is newer than this berth')) as DamagedClientStateError;
    expect(e.message).to.match(
      /^the client state store is damaged or unreadable \(schema version 9 is newer than this berth\); start the agent with -repair-state: /,
    );
    expect(e.file).to.equal(undefined);
  });

  it('leaves any other error as it is', () => {
    const other = new Error('EACCES');
    expect(agentStateError(other)).to.equal(other);
    expect(agentStateError('text')).to.equal('text');
  });
});
