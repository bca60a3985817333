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
