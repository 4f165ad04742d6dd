/* libkvevents: publish KV-cache availability events (stored, removed,
 * cleared) as RFC #1527 msgpack maps on a ZeroMQ socket.
 *
 * Include only this header.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_H
#define KVEVENTS_H

#define KVEVENTS_H_INSIDE

#include <kvevents/kvevents-version.h>
#include <kvevents/kvevents-common.h>
#include <kvevents/kvevents-media.h>
#include <kvevents/kvevents-config.h>
#include <kvevents/kvevents-publisher.h>
#include <kvevents/kvevents-subscriber.h>

#undef KVEVENTS_H_INSIDE

#endif /* KVEVENTS_H */
