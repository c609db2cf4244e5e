/** ResultTail is a ranked result's dot count and, for a vote that was not anonymous, its voters: the same in the results panel and in History. */
export function ResultTail({ count, voters }: { count: number; voters: readonly string[] }) {
  return (
    <>
      <span className="vote-result-count">
        {count} dot{count === 1 ? '' : 's'}
      </span>
      {voters.length > 0 && (
        <span className="vote-result-voters" aria-label={`Voted by ${voters.join(', ')}`}>
          {voters.map((v) => (
            <span key={v} title={v}>
              {v}
            </span>
          ))}
        </span>
      )}
    </>
  );
}
