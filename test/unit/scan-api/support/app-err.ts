import { AppError } from '../../../../src/errors';

/** The AppError a promise rejects with; fails the test when it resolves or rejects with anything else. */
export async function appErr(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected an AppError, nothing was thrown');
}
