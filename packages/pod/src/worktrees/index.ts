export {
  generatedWorktreeName,
  listWorktrees,
  openWorktree,
  removeWorktree,
  WORKTREE_BRANCH_PREFIX,
  WORKTREE_NAME_PATTERN,
  WORKTREES_DIR,
  WorktreeError,
  type WorktreeInfo,
  type WorktreeOptions,
} from "./worktrees.ts";
