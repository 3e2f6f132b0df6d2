-- Keep the tenant's bookkeeping in step with one session: its live-index entry and its idempotency key's life.
-- Runs in the tenant's slot, after the session's own script. If a replica dies between the two, the index
-- heals by itself: entries are lease-expiry hints, pruned once their time has passed. (An ending session only
-- leaves the live index, by a plain ZREM or inside transition.lua: its key already outlives its tombstone.)
-- KEYS[1] idempotency key  KEYS[2] tenant live index
-- ARGV[1] session id  ARGV[2] 'live' (renewed) or 'purged'  ARGV[3] lease expiry ms  ARGV[4] key ttl ms
local value = redis.call('GET', KEYS[1])
local ours = value and string.sub(value, 1, string.len(ARGV[1]) + 1) == ARGV[1] .. '|'
if ARGV[2] == 'live' then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
else
  redis.call('ZREM', KEYS[2], ARGV[1])
end
if ours then
  if ARGV[2] == 'purged' then
    redis.call('DEL', KEYS[1])
  else
    redis.call('PEXPIRE', KEYS[1], ARGV[4])
  end
end
return 'OK'
