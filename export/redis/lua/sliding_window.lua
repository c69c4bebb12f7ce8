-- sliding_window: counters of the current and previous windows (aligned
-- to the Unix epoch) and the estimate prev*(1 - elapsed/W) + current; a
-- request of cost n is admitted when prev*(W - elapsed) <= (limit -
-- current - n)*W. ARGV[1] limit, ARGV[2] window (µs). KEYS[1] is a hash:
-- k = the current window's index, p = the previous count, c = the current
-- count. Integer arithmetic in doubles, exact while limit*W < 2^53.
local limit, W = tonumber(ARGV[1]), tonumber(ARGV[2])
local key = KEYS[1]
local k = math.floor(now / W)
local prev, curr = 0, 0
local s = redis.call('HMGET', key, 'k', 'p', 'c')
if s[1] then
  local sk, sp, sc = tonumber(s[1]), tonumber(s[2]), tonumber(s[3])
  if sp ~= 0 or sc ~= 0 then
    if sk >= k then
      -- the key's window; a time before it stays in it
      k, prev, curr = sk, sp, sc
    elseif sk == k - 1 then
      prev = sc
    end
  end
end
local elapsed, lag = now - k * W, 0
if elapsed < 0 then elapsed, lag = 0, -elapsed end
-- what the previous window still costs, in whole units (rounded up)
local weighted = math.ceil(prev * (W - elapsed) / W)
local reset = 0
if curr > 0 then
  reset = (k + 2) * W - now
elseif prev > 0 then
  reset = (k + 1) * W - now
end
local remaining = limit - curr - weighted
if remaining < 0 then remaining = 0 end
if cost <= 0 then return {1, remaining, 0, reset, 0} end
if cost > limit then return {0, remaining, NEVER, reset, 0} end
local room = limit - curr - cost
if room < 0 or (prev > 0 and prev * (W - elapsed) > room * W) then
  local retry
  if room >= 0 then
    -- later in this window: elapsed >= W - floor(room*W/prev)
    retry = W - math.floor(room * W / prev) - elapsed
  else
    -- in the next window, where curr becomes prev
    retry = W - elapsed + W - math.floor((limit - cost) * W / curr)
  end
  return {0, remaining, lag + retry, reset, 0}
end
if not dry then
  redis.call('HSET', key, 'k', num(k), 'p', num(prev), 'c', num(curr + cost))
  keep({key}, (k + 2) * W - now)
end
remaining = limit - curr - cost - weighted
if remaining < 0 then remaining = 0 end
return {1, remaining, 0, (k + 2) * W - now, 0}
