/**
 * The naive spec oracle (test/naiveOracle.ts: a second implementation of the loss-mask rules whose records must equal
 * prepare's) on the hand-written families (the npm tokenizers, the Kimi stand-in), and the checks of the comparison
 * itself: the fixture sets cover every fixture run, and a deliberately wrong rule shows. The fixture templates run in
 * oracleFixtureMasks-1/2/3.test.ts, the training templates in oracleTrainingMasks.test.ts.
 */
import { registerOracleSet } from '../naiveOracle';

registerOracleSet('families');
