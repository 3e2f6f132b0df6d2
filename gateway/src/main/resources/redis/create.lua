-- Create a session record and index it at its lease expiry, unless it exists already (an idempotent retry).
-- KEYS[1] session  KEYS[2] bucket due index  KEYS[3] bucket state counts
-- ARGV[1] lease expiry ms  ARGV[2] session id  ARGV[3..] field, value pairs
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {'EXISTING', redis.call('HGETALL', KEYS[1])}
end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('ZADD', KEYS[2], ARGV[1], ARGV[2])
redis.call('HINCRBY', KEYS[3], 'ALLOCATED', 1)
return {'CREATED'}
