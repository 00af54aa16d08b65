/**
 * `dist/cli.js`, the `eagle3-prep` command: a loader that runs the CLI's bundle (`dist/cli-bundle.js`, built from
 * `src/cli.ts`) from the V8 code cache (`codeCache.ts`). The bundle runs as this module's body: `require('dist/cli.js')`
 * returns its exports (`main`, `buildProgram`), and it starts the command line when this file is the main module.
 */
import { join } from 'node:path';
import { runBundle } from './codeCache';

runBundle(join(__dirname, 'cli-bundle.js'), module);
