/**
 * The naive spec oracle of oracleMasks.test.ts on fixture set 2 of 3 (every third run over the 57 fixture templates of
 * test/fixtures/templates and templates-more), in a process of its own so that the sets run side by side.
 */
process.env.ORACLE_SET = 'fixtures-2';
require('./oracleMasks.test');
