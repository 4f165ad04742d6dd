/* fault.h: fault injection and a fixed clock for the tests.  Only the testing build of the
 * library (libkvevents-testing.la, compiled with KVEV_TESTING) has the
 * seam; in the shipped library KVEV_FAULT() is a constant FALSE and
 * nothing of this exists.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_FAULT_H
#define KVEVENTS_FAULT_H

#include "internal.h"

G_BEGIN_DECLS

typedef enum
{
  KVEV_FAULT_SEND,        /* zmq_send of a message's first frame */
  KVEV_FAULT_SOCKET,      /* zmq_socket */
  KVEV_FAULT_THREAD,      /* g_thread_try_new of the worker */
  KVEV_FAULT_ZAP_RECEIVE, /* zmq_msg_recv of the ZAP handler */
  KVEV_FAULT_N_POINTS,
} KvevFaultPoint;

#ifdef KVEV_TESTING
/* The nth call through point (counting from 1 after this call) fails,
 * and only that one; nth 0 disarms it. */
void kvev_fault_arm (KvevFaultPoint point, guint nth);
/* As kvev_fault_arm(), but the nth call and every later one fail, until
 * point is armed again. */
void kvev_fault_arm_from (KvevFaultPoint point, guint nth);
gboolean kvev_fault_hit (KvevFaultPoint point);
#define KVEV_FAULT(point) G_UNLIKELY (kvev_fault_hit (point))
/* Every message's timestamp is timestamp_ms from now on, so a test can
 * compare payloads byte for byte; 0 gives the real clock back. */
void kvev_fault_set_clock (gint64 timestamp_ms);
gint64 kvev_fault_now_ms (void);
#define KVEV_NOW_MS() kvev_fault_now_ms ()
#else
#define KVEV_FAULT(point) FALSE
#define KVEV_NOW_MS() (g_get_real_time () / 1000)
#endif

G_END_DECLS

#endif /* KVEVENTS_FAULT_H */
