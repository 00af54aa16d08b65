/** The naive spec oracle (test/naiveOracle.ts) on the 18 training templates of test/fixtures/templates-training. */
import { registerOracleSet } from '../naiveOracle';

registerOracleSet('training');
