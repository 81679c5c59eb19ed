// Entry of a validation thread (see validation-pool.ts). Plain JavaScript because a worker
// thread cannot start from a .ts file; it registers tsx and then loads the TypeScript worker.
'use strict';
require('tsx/cjs/api').register();
module.exports = require('./validation-worker.ts');
