/**
 * The naive spec oracle (test/naiveOracle.ts) on template set 3 of 3: fixture templates of test/fixtures/templates and
 * templates-more with all their runs, training templates of test/fixtures/templates-training and planted mistakes, the
 * runs whose model folders get the same tokenizer.json in one set (naiveOracle.ts templateSets).
 */
import { registerOracleSet } from '../naiveOracle';

registerOracleSet('fixtures-3');
