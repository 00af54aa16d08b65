/**
 * The naive spec oracle (test/naiveOracle.ts) on fixture set 1 of 3: every third fixture template of test/fixtures/templates
 * and templates-more, with all its runs.
 */
import { registerOracleSet } from '../naiveOracle';

registerOracleSet('fixtures-1');
