-- Extend the lease of a live session. Never revives one whose lease has already run out.
-- KEYS[1] session  KEYS[2] bucket due index
-- ARGV[1] tenant  ARGV[2] expected epoch or ''  ARGV[3] new expiry ms  ARGV[4] lease ms  ARGV[5] now ms  ARGV[6] session id
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {'NOT_FOUND'}
end
local h = redis.call('HMGET', KEYS[1], 'tenant', 'state', 'epoch', 'expires')
if h[1] ~= ARGV[1] then
  return {'NOT_FOUND'}
end
if not is_live(h[2]) then
  return {'TERMINAL', redis.call('HGETALL', KEYS[1])}
end
if tonumber(h[4]) <= tonumber(ARGV[5]) then
  return {'LEASE_EXPIRED', redis.call('HGETALL', KEYS[1])}
end
if ARGV[2] ~= '' and tonumber(ARGV[2]) ~= tonumber(h[3]) then
  return {'STALE_EPOCH', redis.call('HGETALL', KEYS[1])}
end
redis.call('HSET', KEYS[1], 'expires', ARGV[3], 'lease', ARGV[4], 'updated', ARGV[5])
redis.call('HINCRBY', KEYS[1], 'renewals', 1)
-- The index may keep a later time than a shortened lease; pull it forward so expiry is never late by more
-- than the reaper's period. A later expiry needs no write: the reaper re-indexes when it finds the old time.
local due = redis.call('ZSCORE', KEYS[2], ARGV[6])
if not due or tonumber(due) > tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[6])
end
return {'OK', redis.call('HGETALL', KEYS[1])}
