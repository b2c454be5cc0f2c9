"""identity over GraphQL: `viewer`, `startSession`, `endSession`, `clearLoginLockout`."""
