/**
 * Closes a Jest run with one plain line, `jest: N passed, N failed, N skipped`, so a reader of the
 * run's last lines (CI included) sees how many tests ran. Written at process exit: Jest prints its
 * own summary and "Ran all test suites" after every reporter's onRunComplete. The line goes to both
 * standard output and standard error: Jest writes its own report to standard error, and a reader that
 * keeps the two streams apart (or reads only standard output) must still find it last.
 */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests, numFailedTests, numPendingTests, numTodoTests } = results;
    const line = `jest: ${numPassedTests} passed, ${numFailedTests} failed, ${numPendingTests + numTodoTests} skipped`;
    process.once('exit', () => {
      process.stderr.write(`\n${line}\n`);
      process.stdout.write(`\n${line}\n`);
    });
  }
}
module.exports = SummaryReporter;
