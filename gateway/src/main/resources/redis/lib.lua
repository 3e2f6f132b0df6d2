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
