-- Shared by every session script: prepended to each one when it is loaded (see RedisScript).

local function is_live(state)
  return state == 'ALLOCATED' or state == 'READY' or state == 'ATTACHED'
end

-- Counts the open cleanup obligations (fields o:<id> whose JSON status is PENDING) of one session record.
local function count_pending(session_key)
  local pending = 0
  local all = redis.call('HGETALL', session_key)
  for i = 1, #all, 2 do
    if string.sub(all[i], 1, 2) == 'o:' and cjson.decode(all[i + 1]).status == 'PENDING' then
      pending = pending + 1
    end
  end
  return pending
end

-- Keeps a session's entry in its bucket's engine-held index: a terminal session an engine may still physically
-- hold KV for, scored by the latest moment it may hold it (an open obligation, or a hold with no known end: +inf).
-- Live sessions and sessions no engine holds anything for are not in the index.
local function index_held(session_key, held_key, session_id)
  local state = redis.call('HGET', session_key, 'state')
  if not state or is_live(state) then
    redis.call('ZREM', held_key, session_id)
    return
  end
  local until_ms = nil
  local all = redis.call('HGETALL', session_key)
  for i = 1, #all, 2 do
    if string.sub(all[i], 1, 2) == 'o:' then
      local o = cjson.decode(all[i + 1])
      if o.status ~= 'DISCHARGED' then
        local held = o.heldUntil
        if o.status == 'PENDING' or type(held) ~= 'number' then
          until_ms = '+inf'
        elseif until_ms ~= '+inf' and (until_ms == nil or held > until_ms) then
          until_ms = held
        end
      end
    end
  end
  if until_ms == nil then
    redis.call('ZREM', held_key, session_id)
  elseif until_ms == '+inf' then
    redis.call('ZADD', held_key, '+inf', session_id)
  else
    redis.call('ZADD', held_key, string.format('%d', until_ms), session_id)
  end
end
