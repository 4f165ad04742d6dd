/* counter.h: statistics counters that one thread writes and any thread
 * reads.  Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_COUNTER_H
#define KVEVENTS_COUNTER_H

/* Relaxed atomics, so a reader never sees a torn 64-bit value.  Writers
 * that hold a lock use the store form, which costs no locked
 * instruction. */
#define kvev_counter_get(ptr) __atomic_load_n ((ptr), __ATOMIC_RELAXED)
#define kvev_counter_set(ptr, value) __atomic_store_n ((ptr), (value), __ATOMIC_RELAXED)
#define kvev_counter_add(ptr, n) ((void) __atomic_fetch_add ((ptr), (n), __ATOMIC_RELAXED))
/* For a counter that a reader takes before kvev_queue_counts(): the
 * release store and the acquire load keep the snapshot from missing a
 * pop whose events the counter already has. */
#define kvev_counter_set_release(ptr, value) __atomic_store_n ((ptr), (value), __ATOMIC_RELEASE)
#define kvev_counter_get_acquire(ptr) __atomic_load_n ((ptr), __ATOMIC_ACQUIRE)

#endif /* KVEVENTS_COUNTER_H */
