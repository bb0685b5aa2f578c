/* tests/docs/prelude.c - what the docs' C fragments take as given
   (tests/docs/test_snippets.sh compiles each fragment after this file,
   then closes the function): a lock's options `lo`, its
   handle `lock` on a client `client`, and the replies and readings the value
   decoders are given. */
#define REDLOCK_IMPLEMENTATION
#include "redlock.h"
#include <stdio.h>
#include <string.h>

int main(void)
{
    redlock_lock_opts lo = {0};
    redlock_lock lock;
    redlock_client client;
    redlock_reply get_reply, hgetall_reply;
    int64_t pttl = -1, wall_ms = 0;
    memset(&lock, 0, sizeof lock);
    memset(&client, 0, sizeof client);
    memset(&get_reply, 0, sizeof get_reply);
    memset(&hgetall_reply, 0, sizeof hgetall_reply);
