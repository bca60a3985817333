/** Resolves when `work` settles or `deadline` (epoch ms) passes, whichever is first; never rejects. */
export async function until(deadline: number, work: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
  });
  await Promise.race([work.then(() => undefined, () => undefined), expired]);
  clearTimeout(timer);
}

/** Whole seconds left until `deadline`, at least `min`. */
export const secondsLeft = (deadline: number, min = 0): number => Math.max(min, Math.floor((deadline - Date.now()) / 1000));

/** `work`, or a rejection once `ms` have passed without it settling. */
export async function withTimeout<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
