"""medground.llm"""
