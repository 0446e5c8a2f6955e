-- Batch, downstream of the stream: the three auctions with the most bids in each closed 10-second
-- window (Nexmark's q5 "hot items", on tumbling windows), rebuilt from the streamed table each run.
with ranked as (
  select window_start, window_end, auction, bids, top_price,
         row_number() over (partition by window_start, window_end order by bids desc, auction) as rank
  from {{ ref('auction_bids_10s') }}
)
select * from ranked where rank <= 3
