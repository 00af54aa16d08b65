/**
 * `dist/worker.js`, the worker_threads entry (the row pool's workers, the VS Code command's `prepare` worker and its
 * service workers): a loader that runs the worker's bundle (`dist/worker-bundle.js`, built from `src/worker.ts`) from
 * the V8 code cache (`codeCache.ts`), as this module's body.
 */
import { join } from 'node:path';
import { runBundle } from './codeCache';

runBundle(join(__dirname, 'worker-bundle.js'), module);
