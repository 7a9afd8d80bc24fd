import type { ImagesOptions } from '../program.js';
import type { RunState } from '../run-state.js';
export async function imagesCommand(_o: ImagesOptions, _state: RunState): Promise<number> {
  throw new Error('not yet');
}
