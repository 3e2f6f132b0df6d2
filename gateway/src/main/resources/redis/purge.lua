-- Remove a tombstone whose retention has passed and that no engine may still hold KV for.
-- Run only after the idempotency key was forgotten, so a retry never finds a key pointing at nothing.
-- KEYS[1] session  KEYS[2] bucket due index  KEYS[3] bucket state counts  KEYS[4] bucket engine-held index
-- ARGV[1] session id  ARGV[2] now ms
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('ZREM', KEYS[4], ARGV[1])
  return 'GONE'
end
local h = redis.call('HMGET', KEYS[1], 'state', 'pending', 'tomb')
if is_live(h[1]) then
  return 'NOT_DUE'
end
if (tonumber(h[2] or '0') or 0) > 0 or tonumber(h[3]) > tonumber(ARGV[2]) then
  return 'NOT_DUE'
end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('HINCRBY', KEYS[3], h[1], -1)
return 'PURGED'
