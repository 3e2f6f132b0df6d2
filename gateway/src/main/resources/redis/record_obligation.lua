-- Record (or replace) one cleanup obligation. An open obligation of a terminal session is due at once.
-- KEYS[1] session  KEYS[2] bucket due index  KEYS[3] bucket engine-held index
-- ARGV[1] session id  ARGV[2] tenant or ''  ARGV[3] obligation id  ARGV[4] obligation json  ARGV[5] now ms
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {'NOT_FOUND'}
end
local h = redis.call('HMGET', KEYS[1], 'tenant', 'state', 'cuntil')
if ARGV[2] ~= '' and h[1] ~= ARGV[2] then
  return {'NOT_FOUND'}
end
redis.call('HSET', KEYS[1], 'o:' .. ARGV[3], ARGV[4], 'updated', ARGV[5])
local pending = count_pending(KEYS[1])
redis.call('HSET', KEYS[1], 'pending', pending)
local live = is_live(h[2])
local claimed = h[3] and tonumber(h[3]) > tonumber(ARGV[5])
if not live and pending > 0 and not claimed then
  redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
end
index_held(KEYS[1], KEYS[3], ARGV[1])
return {'OK', redis.call('HGETALL', KEYS[1])}
