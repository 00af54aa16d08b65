/**
 * The naive spec oracle (test/naiveOracle.ts: a second implementation of the loss-mask rules whose records must equal
 * prepare's) on the hand-written families (the npm tokenizers, the Kimi stand-in), and the checks of the comparison
 * itself: the template sets cover every fixture run and training template, and a deliberately wrong rule shows. The
 * fixture and training templates (and the mistakes planted on fixture templates) run in oracleFixtureMasks-1/2/3.test.ts.
 */
import { registerOracleSet } from '../naiveOracle';

registerOracleSet('families');
