/**
 * Closes a Jest run with one plain line, `jest: N passed, N failed, N skipped`, so a reader of the
 * run's last lines (CI included) sees how many tests ran. Written at process exit: Jest prints its
 * own summary and "Ran all test suites" after every reporter's onRunComplete.
 */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests, numFailedTests, numPendingTests, numTodoTests } = results;
    const line = `jest: ${numPassedTests} passed, ${numFailedTests} failed, ${numPendingTests + numTodoTests} skipped`;
    process.once('exit', () => process.stderr.write(`\n${line}\n`));
  }
}
module.exports = SummaryReporter;
