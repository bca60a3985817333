/**
 * How busy a process is answering requests: the average number of requests in flight over an interval, by Little's
 * law the time spent answering them, summed, over the interval's length. A request counts when it has been answered.
 */
export type RequestLoad = {
  /** One request answered after `seconds`. */
  served: (seconds: number) => void;
  /** The average number of requests in flight since the previous call (or since this meter was made). */
  take: () => number;
};

export function requestLoad(): RequestLoad {
  let answering = 0;
  let since = performance.now();
  return {
    served: (seconds) => {
      answering += seconds;
    },
    take: () => {
      const now = performance.now();
      const average = now > since ? answering / ((now - since) / 1000) : 0;
      answering = 0;
      since = now;
      return average;
    },
  };
}
