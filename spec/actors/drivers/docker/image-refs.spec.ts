/**
 * The docker image coordinator's removal after `image_delay`: a removal armed by an image's last
 * user never runs while a pull is under way (the pull may be of that image, and its task takes
 * the image only once the pull answers), and a task that takes the image cancels it.
 */
import { expect } from 'chai';
import { ImageRefs } from '../../../../actors/drivers/docker/images.ts';
import { ManualClock } from '../../../support/fake-rpc.ts';

describe('docker: image removal after image_delay', () => {
  const setup = () => {
    const clock = new ManualClock();
    const removed: string[] = [];
    const refs = new ImageRefs({ enabled: true, delayMs: 200, clock, remove: async (id) => void removed.push(id), onError: () => {} });
    return { clock, removed, refs };
  };

  it('removes an image image_delay after its last user gives it back', () => {
    const { clock, removed, refs } = setup();
    refs.take('img', 'a');
    refs.take('img', 'b');
    refs.release('img', 'a');
    clock.advance(1000);
    expect(removed, 'a user is left').to.deep.equal([]);
    refs.release('img', 'b');
    clock.advance(199);
    expect(removed).to.deep.equal([]);
    clock.advance(1);
    expect(removed).to.deep.equal(['img']);
  });

  it('waits while a pull is under way, and a task that takes the image after its pull keeps it', () => {
    const { clock, removed, refs } = setup();
    refs.take('img', 'old');
    refs.release('img', 'old');
    const pulled = refs.beginPull();
    clock.advance(200);
    expect(removed, 'due during the pull').to.deep.equal([]);
    expect(clock.pending, 'armed again').to.equal(1);
    clock.advance(600);
    expect(removed).to.deep.equal([]);
    pulled();
    refs.take('img', 'new'); // the pull answered with this image
    clock.advance(10_000);
    expect(removed).to.deep.equal([]);
    expect(refs.users('img')).to.equal(1);
  });

  it('removes after a pull of another image ends; ending a pull twice counts once', () => {
    const { clock, removed, refs } = setup();
    refs.take('img', 'old');
    refs.release('img', 'old');
    const one = refs.beginPull();
    const two = refs.beginPull();
    one();
    one();
    clock.advance(200);
    expect(removed, 'the second pull is still under way').to.deep.equal([]);
    two();
    clock.advance(200);
    expect(removed).to.deep.equal(['img']);
  });
});
