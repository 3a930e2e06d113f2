// Isolate memory that cannot grow without bound.

/** A map of at most `maxEntries`: setting a new key when it is full drops the oldest. */
export function boundedMap<K, V>(maxEntries: number) {
  const map = new Map<K, V>();
  return {
    get: (key: K) => map.get(key),
    delete: (key: K) => map.delete(key),
    set(key: K, value: V) {
      map.delete(key);
      if (map.size >= maxEntries) {
        const oldest = map.keys().next();
        if (!oldest.done) map.delete(oldest.value);
      }
      map.set(key, value);
    },
  };
}

export type BoundedMap<K, V> = ReturnType<typeof boundedMap<K, V>>;
