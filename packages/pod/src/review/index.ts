export {
  type ChangedFile,
  type GitChanges,
  GitChangesError,
  type GitChangesOptions,
  gitChanges,
} from "./git-changes.ts";
export {
  parseReview,
  REVIEW_SEVERITIES,
  type ReviewFinding,
  ReviewFindingSchema,
  type ReviewResult,
  reviewPrompt,
} from "./review.ts";
