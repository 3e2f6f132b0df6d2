-- Act on one session the reaper found due. Decides from the record alone, so a stale index entry only ever
-- makes the reaper look early, and a race between replicas lets exactly one of them act.
-- KEYS[1] session  KEYS[2] bucket due index  KEYS[3] bucket state counts  KEYS[4] bucket engine-held index
-- ARGV[1] session id  ARGV[2] now ms  ARGV[3] claim ttl ms  ARGV[4] retention ms
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('ZREM', KEYS[4], ARGV[1])
  return {'GONE'}
end
local h = redis.call('HMGET', KEYS[1], 'state', 'expires', 'pending', 'cuntil', 'tomb', 'epoch')
local now = tonumber(ARGV[2])
local pending = tonumber(h[3] or '0') or 0
local function claim()
  local token = redis.call('HINCRBY', KEYS[1], 'ctoken', 1)
  local claim_until = string.format('%d', now + tonumber(ARGV[3]))
  redis.call('HSET', KEYS[1], 'cuntil', claim_until)
  redis.call('ZADD', KEYS[2], claim_until, ARGV[1])
  return token
end
if is_live(h[1]) then
  if tonumber(h[2]) > now then
    redis.call('ZADD', KEYS[2], h[2], ARGV[1])
    return {'NOT_DUE', 0}
  end
  local tomb = string.format('%d', now + tonumber(ARGV[4]))
  redis.call('HSET', KEYS[1], 'state', 'EXPIRED', 'epoch', string.format('%d', tonumber(h[6]) + 1),
    'updated', ARGV[2], 'reason', 'lease expired', 'terminal_at', ARGV[2], 'tomb', tomb)
  redis.call('HINCRBY', KEYS[3], h[1], -1)
  redis.call('HINCRBY', KEYS[3], 'EXPIRED', 1)
  local token = 0
  if pending > 0 then
    token = claim()
  else
    redis.call('ZADD', KEYS[2], tomb, ARGV[1])
  end
  index_held(KEYS[1], KEYS[4], ARGV[1])
  return {'EXPIRED', token, redis.call('HGETALL', KEYS[1])}
end
if pending > 0 then
  if h[4] and tonumber(h[4]) > now then
    redis.call('ZADD', KEYS[2], h[4], ARGV[1])
    return {'NOT_DUE', 0}
  end
  local token = claim()
  return {'CLAIMED', token, redis.call('HGETALL', KEYS[1])}
end
if tonumber(h[5]) > now then
  redis.call('ZADD', KEYS[2], h[5], ARGV[1])
  return {'NOT_DUE', 0}
end
return {'PURGE_DUE', 0, redis.call('HGETALL', KEYS[1])}
