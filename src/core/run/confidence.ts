/** Seed 003's band on a validator's confidence: at or above AUTO a result goes on; below REVIEW it is repaired; between, a person decides. */
export const CONFIDENCE_AUTO = 0.95;
export const CONFIDENCE_REVIEW = 0.7;
