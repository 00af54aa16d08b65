/**
 * The naive spec oracle of oracleMasks.test.ts on the 18 training templates of test/fixtures/templates-training, in a
 * process of its own (ORACLE_SET=training): the oracle's records must equal prepare's, id for id and bit for bit.
 */
process.env.ORACLE_SET = 'training';
require('./oracleMasks.test');
